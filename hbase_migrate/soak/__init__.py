"""The soak: linked lists that expose a lost write, and a seeded schedule of faults."""
