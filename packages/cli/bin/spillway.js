#!/usr/bin/env node
import "../dist/spillway.mjs"
