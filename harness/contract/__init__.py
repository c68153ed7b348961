"""The contract as data: operations, parameters and types; the four bindings; the one
hardened XML parser."""
