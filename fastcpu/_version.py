"""fastcpu's version: its own module at the bottom of the import graph, so
that any module can name it without importing the package."""

__version__ = "0.8.7"
