"""The kernel every other part stands on: messages, results, errors, the Model/Tool/Sandbox seams,
the tool loop and the run record. It imports nothing of the project above it."""
