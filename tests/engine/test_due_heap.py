from __future__ import annotations

from polling.engine.due_heap import DueHeap


def test_it_pops_what_is_due_earliest_first():
    heap = DueHeap()
    heap.schedule(3, 30.0)
    heap.schedule(1, 10.0)
    heap.schedule(2, 20.0)
    assert heap.pop_due(25.0, limit=10) == [(1, 10.0), (2, 20.0)]
    assert heap.next_due() == 30.0
    assert len(heap) == 1


def test_ties_come_out_in_insertion_order():
    heap = DueHeap()
    for project_id in (5, 1, 3):
        heap.schedule(project_id, 1.0)
    assert [pid for pid, _ in heap.pop_due(1.0, limit=10)] == [5, 1, 3]


def test_rescheduling_moves_a_project_without_leaving_a_ghost():
    heap = DueHeap()
    heap.schedule(1, 10.0)
    heap.schedule(1, 50.0)
    assert heap.pop_due(20.0, limit=10) == []
    assert heap.next_due() == 50.0
    assert heap.due(1) == 50.0


def test_removed_projects_never_come_out():
    heap = DueHeap()
    heap.schedule(1, 10.0)
    heap.schedule(2, 11.0)
    heap.remove(1)
    assert 1 not in heap
    assert heap.pop_due(100.0, limit=10) == [(2, 11.0)]
    assert heap.next_due() is None


def test_pop_due_respects_the_limit():
    heap = DueHeap()
    for project_id in range(10):
        heap.schedule(project_id, float(project_id))
    assert len(heap.pop_due(100.0, limit=4)) == 4
    assert len(heap) == 6


def test_many_reschedules_keep_the_heap_small():
    heap = DueHeap()
    for round_ in range(50):
        for project_id in range(100):
            heap.schedule(project_id, float(round_))
    assert len(heap) == 100
    assert len(heap._heap) <= 2 * 100 + 1024
    assert heap.pop_due(1000.0, limit=1000)[0] == (0, 49.0)
