"""``harness call``: one operation over one binding (or each), sent once, shown and judged."""
