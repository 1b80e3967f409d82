"""The tools the policy calls: the registry, each tool's spec, and the built-in tools."""
