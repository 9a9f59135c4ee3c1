"""Incidents: when a project is down, and what happens when it is.

machine.py is the pure decision table; states.py and recorder.py are the
result writer's steps that apply it to stored rows, in the transaction that
stores the polls.
"""
