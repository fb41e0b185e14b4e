"""Running untrusted Python in a fresh, locked-down container, one execution per container."""
