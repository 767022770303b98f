"""Writing a file atomically: a temporary file beside the target, synced,
then renamed or linked into place, so that a crash leaves the old file or the
new one, never half of one. Temporary files are hidden and say who wrote them
(``.NAME.fastcpu-save-PID-XXXXXXXX.tmp``); the next write to the same name
removes those whose writer is gone. Knows nothing of what is written."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

__all__ = ["check_replaceable", "check_target", "nonempty_path", "tmp_prefix", "write_atomic"]

#: Leftover temporary files: ".NAME.fastcpu-save-PID-XXXXXXXX.tmp".
_TMP_TAG = "fastcpu-save"


def _umask() -> int:
    """This process's umask, read without changing it (Linux >= 4.7), else 022."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def check_replaceable(path: Path) -> None:
    """Refuse a name that holds something other than a regular file: the
    atomic rename would put a new file in place of a device, a FIFO or a
    symbolic link (not its target).

    Raises:
        ValueError: `path` is a symbolic link or not a regular file.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise ValueError(f"{path} is a symbolic link: give the path of the file itself")
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{path} is not a regular file: give a file name")


def check_target(path: object, overwrite: object) -> Path:
    """`path` as a Path if a file may be written there (before any work is
    done to fill it).

    Raises:
        TypeError: `path` is not a str or os.PathLike, or `overwrite` not a bool.
        ValueError: `path` is empty, a symbolic link, or names something
            other than a regular file.
        IsADirectoryError, FileNotFoundError: a directory, or in none.
        FileExistsError: it exists and `overwrite` is false.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, not {type(path).__name__}")
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool, not {type(overwrite).__name__}")
    path = nonempty_path(path)
    if path.is_dir():
        raise IsADirectoryError(f"{path} is a directory: give a file name")
    if not path.parent.is_dir():
        raise FileNotFoundError(f"cannot write {path}: directory {path.parent} does not exist")
    check_replaceable(path)
    if not overwrite and path.exists():
        raise FileExistsError(f"{path} exists: pass overwrite=True to replace it")
    return path


def write_atomic(path: Path, data: bytes, *, overwrite: bool) -> None:
    """Write `data` to `path` through a synced temporary file beside it,
    renamed (`overwrite`) or linked (not: it fails if the name exists) into
    place, so that `path` holds the old contents or all of the new; removes
    the temporary files of writers that were killed first.

    Raises:
        FileExistsError: `path` appeared and `overwrite` is false.
        OSError: the directory cannot be written.
    """
    directory = path.parent
    _remove_leftovers(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=tmp_prefix(path) + f"{os.getpid()}-",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())  # mkstemp makes it 0600
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            # link() fails if the name exists: no window in which another
            # writer's file could be replaced.
            os.link(tmp, path)
            os.unlink(tmp)
    except FileExistsError:
        _remove(tmp)
        raise FileExistsError(f"{path} exists: pass overwrite=True to replace it") from None
    except BaseException:
        _remove(tmp)
        raise
    _fsync_dir(directory)


def tmp_prefix(path: Path) -> str:
    """How save()'s temporary files for `path` start: hidden, named after the
    target and fastcpu, then the writer's pid (``.x.json.fastcpu-save-PID-``)."""
    return f".{path.name}.{_TMP_TAG}-"


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
