{
  "schema": 1,
  "version": "2026-11-29.1",
  "defaults": {
    "dlp": {
      "clipboard": { "level": "managed", "charLimit": 0 },
      "share": { "send": "managed", "receive": "any", "exempt": [] },
      "print": "allow",
      "screenCapture": "allow",
      "fileExport": { "deny": ["/tmp/**", "/var/tmp/**", "/dev/shm/**"] },
      "notifications": "allow"
    },
    "compliance": { "onViolation": "block", "offlineGraceSeconds": 86400 }
  }
}
