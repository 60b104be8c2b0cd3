#!/bin/sh
# Conformance script. Marker: SSV-SCRIPT-91b2f4d0
# skillchat never executes skill scripts on the host; the model may read this file.
echo "skills-system-validation: $*"
