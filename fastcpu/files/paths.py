"""Writing a file atomically: a synced temporary file beside the target, renamed or linked into place.

Temporary files are hidden (``.NAME.fastcpu-save-PID-XXXXXXXX.tmp``) and
removed by the next write once their writer is gone; every OSError names
the target."""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .._base import ForkSafeLock


__all__ = ["check_name_length", "check_replaceable", "check_target", "create_tmp", "naming",
           "nonempty_path", "tmp_prefix", "write_atomic"]

#: Leftover temporary files: ".NAME.fastcpu-save-PID-XXXXXXXX.tmp".
_TMP_TAG = "fastcpu-save"
#: The digits of the largest pid Linux gives (PID_MAX_LIMIT, 4194304): the
#: room a temporary name keeps for any writer's pid, so that every writer
#: cuts NAME alike and finds the others' leftovers.
_PID_DIGITS = 7
#: Random hex digits that tell two temporary files of one writer apart.
_RANDOM_DIGITS = 8
#: What a temporary name adds to NAME: "." NAME "." TAG "-" PID "-" RANDOM ".tmp".
_TMP_EXTRA = len(f"..{_TMP_TAG}-") + _PID_DIGITS + len("-") + _RANDOM_DIGITS + len(".tmp")
#: NAME_MAX where the file system does not say (Linux's, for every local one).
_NAME_MAX_DEFAULT = 255
#: Bytes written at a time.
_WRITE_CHUNK_BYTES = 1 << 20


#: Guards the umask round trip of _umask() (no /proc): fastcpu's own
#: threads never see the mask it sets for that moment.
_umask_lock = ForkSafeLock("the umask's round trip")


def _umask() -> int:
    """This process's umask: read without changing it from /proc/self/status
    (Linux >= 4.7); without /proc (a minimal container, a chroot), from the
    kernel by setting 0777, the most restrictive mask, and putting the old
    one back at once (a file another thread creates in that moment gets no
    permissions, never more than it asked for)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_lock:
        mask = os.umask(0o777)
        os.umask(mask)
    return mask


def _name_max(directory: Path) -> int:
    """The longest file name, in bytes, `directory`'s file system takes."""
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError):
        return _NAME_MAX_DEFAULT


def check_name_length(path: Path) -> None:
    """Refuse a name longer than its file system takes (ValueError), before any work."""
    size, most = len(os.fsencode(path.name)), _name_max(path.parent)
    if size > most:
        raise ValueError(f"{path}: a name of {size} bytes; its file system takes at most {most}: "
                         "choose a shorter name")


def check_replaceable(path: Path) -> None:
    """Refuse (ValueError) a symbolic link or anything but a regular file at `path`."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{path} is a symbolic link: give the path of the file itself")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path} is not a regular file: give a file name")


def check_target(path: object, overwrite: object) -> Path:
    """`path` as a Path if a file may be written there.

    Raises:
        TypeError: `path` is not a str or os.PathLike, or `overwrite` not a bool.
        ValueError: empty, a symbolic link, not a regular file, or too long.
        IsADirectoryError, FileNotFoundError: a directory, or in none.
        FileExistsError: it exists and `overwrite` is false."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, not {type(overwrite).__name__}")
    path = nonempty_path(path)
    check_name_length(path)
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory: give a file name", os.fspath(path))
    if not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, f"cannot write it: directory {path.parent} does not exist",
                                os.fspath(path))
    check_replaceable(path)
    if not overwrite and path.exists():
        raise _exists(path)
    return path


def _exists(path: Path) -> FileExistsError:
    return FileExistsError(errno.EEXIST, "exists: pass overwrite=True to replace it", os.fspath(path))


def write_atomic(path: Path, data: bytes, *, overwrite: bool) -> None:
    """Write `data` to `path` through a synced temporary file, renamed (`overwrite`) or linked into place.

    Raises:
        FileExistsError: `path` appeared and `overwrite` is false.
        OSError: the directory cannot be written; the error names `path`."""
    directory = path.parent
    _remove_leftovers(path)
    try:
        fd, tmp = create_tmp(path)
    except OSError as exc:
        raise naming(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())  # mkstemp makes it 0600
            with memoryview(data) as view:
                # a chunk at a time: Ctrl-C is seen between chunks, and the
                # temporary file is removed (below), the old one left whole
                for start in range(0, len(data), _WRITE_CHUNK_BYTES):
                    f.write(view[start:start + _WRITE_CHUNK_BYTES])
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            _place_new(tmp, path)
    except FileExistsError:
        _remove(tmp)
        raise _exists(path) from None
    except OSError as exc:
        _remove(tmp)
        raise naming(exc, path) from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(directory)


#: What link() fails with on a file system without hard links: FAT and
#: exFAT (EPERM), many FUSE ones (EPERM, ENOSYS, EOPNOTSUPP).
_NO_HARD_LINKS = frozenset({errno.EPERM, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})


def _place_new(tmp: str, path: Path) -> None:
    """Move `tmp` to the absent `path` by link() (or an exclusive create and rename); FileExistsError if it exists."""
    try:
        os.link(tmp, path)
    except OSError as exc:
        if isinstance(exc, FileExistsError) or exc.errno not in _NO_HARD_LINKS:
            raise
    else:
        os.unlink(tmp)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove(os.fspath(path))  # our empty reservation
        raise


def naming(exc: OSError, path: Path) -> OSError:
    """`exc` (of its own subclass: PermissionError, ...) naming `path`, the
    file asked for, instead of the temporary file it failed on or of no
    file at all (a read's EIO)."""
    return OSError(exc.errno, exc.strerror or str(exc), os.fspath(path))


def create_tmp(path: Path) -> tuple[int, str]:
    """A new temporary file beside `path` (mode 0600): its descriptor and name; OSError if the directory cannot be written."""
    prefix = os.path.join(path.parent, f"{tmp_prefix(path)}{os.getpid()}-")
    for _ in range(100):  # another writer took the name: draw again, as mkstemp does
        tmp = f"{prefix}{secrets.token_hex(_RANDOM_DIGITS // 2)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", os.fspath(path))


def tmp_prefix(path: Path) -> str:
    """How save()'s temporary files for `path` start: hidden, named after the
    target and fastcpu, then the writer's pid (``.x.json.fastcpu-save-PID-``).
    NAME is cut (whole characters, counted in bytes) where the temporary
    name would be longer than the directory's NAME_MAX: a legal name of 230
    bytes must not fail with ENAMETOOLONG."""
    room = _name_max(path.parent) - _TMP_EXTRA
    name = path.name
    while len(os.fsencode(name)) > room and name:
        name = name[:-1]
    return f".{name}.{_TMP_TAG}-"


def _remove_leftovers(path: Path) -> None:
    """Remove temporary files a save() to `path` left when its process was
    killed (SIGKILL, power loss) before it could: ours (same owner, regular
    files) whose writer pid no longer runs. A live writer's file, this
    process's included, is left alone; so is anything that fails to parse."""
    prefix = tmp_prefix(path)
    try:
        names = os.listdir(path.parent)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        pid_text = name[len(prefix):].split("-", 1)[0]
        if not pid_text.isdigit():
            continue
        pid = int(pid_text)
        if pid == os.getpid() or _running(pid):
            continue
        leftover = path.parent / name
        try:
            st = os.lstat(leftover)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(leftover)
        except OSError:
            pass


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process (or a number we cannot ask about)
    return True


def nonempty_path(path: str | os.PathLike[str]) -> Path:
    # Path("") is Path("."): an empty name would silently mean this directory.
    if not os.fspath(path):
        raise ValueError("path is empty: give the result file's name")
    return Path(path)


def _remove(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


def _fsync_dir(directory: Path) -> None:
    """Make the rename itself durable."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
