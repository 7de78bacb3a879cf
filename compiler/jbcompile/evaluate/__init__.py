"""The reference evaluator: prompts → backend → predictions → metrics → report (its modules, in the
order a run goes through them: README.md beside this file)."""
