"""The result-file codec: format, checksum, reading and writing (knows no result type)."""
