"""A Cline memory bank written by Cline's own rules (its "Memory Bank" custom instructions), not memtui's.

The bank is ``memory-bank/`` in the project: six core markdown files that build on each other — projectbrief.md
(the foundation: core requirements and goals), productContext.md (why the project exists, problems it solves, how
it should work, UX goals), systemPatterns.md (architecture, key technical decisions, design patterns, component
relationships), techContext.md (technologies, development setup, constraints, dependencies), activeContext.md
(current focus, recent changes, next steps, active decisions; the most often updated) and progress.md (what works,
what is left, current status, known issues) — plus any extra file for a feature, an integration or a test
strategy. Headings give each file its parts; bullets carry no tags and prose stands beside them. Cline writes the
files itself with its file tools: `write_to_file` (the whole content) and `replace_in_file` (SEARCH/REPLACE blocks
on exact text), straight to disk.
"""

from __future__ import annotations

from pathlib import Path

FILES: dict[str, str] = {
    "projectbrief.md": """# Project Brief

## Overview
Inventory management web app for three warehouses, with barcode scanning on the floor.

## Core Requirements
- Scan a barcode to receive or ship stock
- Stock levels update in real time across warehouses
- Works offline on the handheld scanners for a whole shift

## Goals
Replace the spreadsheet workflow by the end of Q3.
""",
    "productContext.md": """# Product Context

## Why this project exists
Warehouse staff re-key counts from paper into a shared spreadsheet; counts drift by the end of each week.

## Problems it solves
- Double entry of every receipt
- No view of stock in the other warehouses

## How it should work
A scanner user sees the item, the quantity and the bin, and confirms with one tap.

## User experience goals
- One-handed use with gloves on
- Large touch targets, high contrast
""",
    "activeContext.md": """# Active Context

## Current Focus
Implementing the barcode scanning component; the API integration was finished last session.

## Recent Changes
- Added the `useScanner` hook around the camera API
- Switched stock updates to server-sent events

## Next Steps
1. Debounce repeated scans of the same code
2. Offline queue for scans made without network

## Active Decisions
- Keep Redux for state; normalised store keyed by SKU
""",
    "systemPatterns.md": """# System Patterns

## Architecture
React single-page app talking to a FastAPI service; Postgres for stock, Redis for live updates.

## Key Technical Decisions
- Server-sent events rather than WebSockets: one-way updates are all the floor needs
- Redux with a normalised store structure

## Design Patterns
- Repository pattern in the API for stock queries
- Optimistic updates on scan, rolled back on a 409

## Component Relationships
Scanner -> ScanQueue -> StockStore -> WarehouseView
""",
    "techContext.md": """# Tech Context

## Technologies
- React 18, TypeScript, Redux Toolkit
- FastAPI, Postgres 16, Redis 7
- Jest and Playwright for tests

## Development Setup
`docker compose up` starts Postgres and Redis; `npm run dev` serves the app on port 5173.

## Technical Constraints
- Handheld scanners run Chrome 109: no newer web APIs
""",
    "progress.md": """# Progress

## What Works
- User authentication
- Receiving stock by hand entry

## What's Left
- Barcode scanning (in progress)
- Reports

## Current Status
Inventory management is about 80% done; reporting has not started.

## Known Issues
- Counts can go negative when two scanners ship the same item at once
""",
}


def write_bank(project: Path, files: dict[str, str] | None = None, *, newline: str = "\n",
               bom: bool = False) -> Path:
    """`project`/memory-bank with the core files (and any extra in `files`): the bank's folder."""
    bank = project / "memory-bank"
    bank.mkdir(parents=True, exist_ok=True)
    for name, text in (FILES if files is None else files).items():
        write_to_file(bank, name, ("\ufeff" if bom else "") + text.replace("\n", newline))
    return bank


def write_to_file(bank: Path, name: str, content: str) -> None:
    """Cline's write_to_file: the whole file, as given, straight to disk."""
    path = bank / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode())


def replace_in_file(bank: Path, name: str, search: str, replace: str) -> None:
    """Cline's replace_in_file with one SEARCH/REPLACE block: the exact text, once, straight to disk."""
    path = bank / name
    text = path.read_bytes().decode()
    assert text.count(search) >= 1, f"SEARCH block not found in {name}"
    path.write_bytes(text.replace(search, replace, 1).encode())
