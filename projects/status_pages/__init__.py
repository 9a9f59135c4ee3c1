"""Public status pages, their badges, feed and subscriptions: a page
package, so nothing outside the pages imports it (tests/rules/test_page_layering.py)."""
