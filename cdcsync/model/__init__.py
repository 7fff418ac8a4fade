"""The values the loop (engine/), the stages (stages/) and the runtime services (runtime/) pass each other: a batch
and its table (batch.py), a routed run's progress record (progress.py), the pipeline as the loop's drivers see it
(context.py). Nothing here imports those three folders, so each of them imports only downward."""
