"""The client's base layer: settings, environment, exit codes and the daemon connection.

Imports nothing else of annactl (layer order: core < planning < ui < commands < interactive).
"""
