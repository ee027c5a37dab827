"""Ansible plugins annactl hands to ansible-playbook (loaded by Ansible, not imported)."""
