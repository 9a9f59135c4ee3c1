"""Read-only queries behind the dashboard pages.

Every aggregate is computed by the database, and every function answers
for a whole page at once, so a page costs the same number of queries for
five projects or fifty.
"""
