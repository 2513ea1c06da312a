"""Test helpers (not tests): the contract checker, live servers, data builders."""
