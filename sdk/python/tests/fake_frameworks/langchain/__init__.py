"""A stand-in for langchain (see ../README.md)."""
