"""``cardroom loadtest``: scenarios of bot players through the gateway only (cash 6-max with think times,
max throughput, join/leave churn, reconnect storm, lobby polling), time series of what they saw, CPU/RSS of
the service processes, the chip invariants from the services' /metrics, a bare-gRPC baseline measured in
the same run, and a report (terminal, JSON, HTML with PNG plots) checked against SLO flags."""
