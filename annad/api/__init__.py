"""HTTP routes of annad: thin functions that parse, call one PlanService method, return."""
