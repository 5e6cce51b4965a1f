"""Token counting benchmark: throughput and memoized recount cost."""
