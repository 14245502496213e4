/* numasched--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION numasched" to load this file. \quit

-- The views and functions come with the placement of backends; version 1.0
-- is not released yet, so they are added to this script, not to an upgrade.
