"""Generated from proto/arena/v1/arena.proto by proto/generate.py."""
