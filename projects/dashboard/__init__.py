"""The read-only pages: the overview, a project's page and the incidents page,
with their queries, template tags and banners.

Pages are an edge: they read the models, and nothing in the models, the
alerting code, the engine or the writer imports them
(tests/rules/test_page_layering.py).
"""
