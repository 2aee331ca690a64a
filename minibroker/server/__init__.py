"""Sockets and asyncio: listeners, connections and the ordered request pipeline."""
