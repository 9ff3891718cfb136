"""The service runtime every Cardroom service shares.

``config`` reads the environment, ``logs`` writes JSON lines, ``metrics`` holds the gRPC
server interceptor and the ``/metrics`` endpoint, ``server`` runs a ``grpc.aio`` server with
health and reflection until SIGTERM, ``deadlines`` puts a timeout on every outbound call and
``events`` produces enveloped Kafka events.
"""
