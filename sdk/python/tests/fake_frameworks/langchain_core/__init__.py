"""A stand-in for langchain_core (see ../README.md)."""
