#!/usr/bin/env node
// The `sbx` executable. A checked-in file (not dist/) so package managers link it at install time, before a
// workspace build; it loads the built CLI.
import "../dist/bin.js";
