"""The poller engine: plain Python, no Django.

Threads exchange frozen dataclasses (engine.types). The Django edges that
load projects and save outcomes live one level up, in polling/.
"""
