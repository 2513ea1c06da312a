// Saving text the page already holds as a file: a Blob behind a short-lived object URL, so
// the key that fetched it never appears in a URL.

export function saveText(filename, text, type) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = filename;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the click; the URL is released once it has been read.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// A file-name-safe form of an ISO timestamp in UTC: "2026-11-23T060000Z".
export function fileStamp(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso ?? "").replace(/[^0-9A-Za-z-]/g, "");
  return `${d.toISOString().slice(0, 19).replaceAll(":", "")}Z`;
}
