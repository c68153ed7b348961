"""``harness load``: recordings replayed at scale on Locust, timing-faithful, distributed.

Locust monkey-patches the standard library with gevent when it is imported, so only the load
child process (``python -m harness.load``, started by ``harness load``) imports
``harness.load.engine`` and ``harness.load.user``. ``schedule``, ``slicing`` and ``verdict``
are plain Python: the command module uses them (``--dry-run``) without Locust.
"""
