"""ISO 20022 messages of the payouts app: pain.001 files, pain.002 status reports, camt.054 notices.

Pure functions over plain dataclasses, no database: the payouts services call them and store what
they return. Every writer's output validates against the official schema in ./xsd/.
"""
