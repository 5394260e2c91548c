"""The trust boundary: `child` runs untrusted code inside the jail; `host` starts and talks to it."""
