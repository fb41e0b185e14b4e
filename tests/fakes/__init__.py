"""Stand-ins for outside systems, run as real servers so the real client code is exercised."""
