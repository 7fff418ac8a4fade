"""`cdcsync probe`: which hop between this host and Kafka fails, and how to fix it. Imports no pyspark.

Each module imports only modules listed after it (no cycle):
  walk      the whole probe: bootstrap ladders, then every advertised listener, the topics and the group
  ladder    one endpoint, on one connection: DNS → TCP → TLS → ApiVersions → SASL → Metadata
  failures  why a hop failed: exit code, problem and fix, re-probing the listener when that tells more
  topics    the asked-for topics' partitions, leaders and replicas
  group     the consumer group's coordinator
  hop       one endpoint's checks so far, and the client settings every ladder uses
  certs     what a broker's TLS certificate says
  lint      advertised names of narrower reach than the bootstrap address
  report    the result as plain data: checks, verdict, exit code
  protocol  Kafka requests through kafka-python 2.x's protocol layer
  net       DNS, TCP and TLS on sockets the probe owns
"""
