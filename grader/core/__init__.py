"""The browser-safe core: exercise loading, result types, the one pytest run, value checks, diagnosis matching.

It imports nothing else from the kit, and the page's Python runs it unchanged.
"""
