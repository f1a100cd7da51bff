"""Operating a broker: Prometheus metrics, health checks and the web console on the admin HTTP listener."""
