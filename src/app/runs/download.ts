/** Saves text or bytes as a file through the browser's download (an object URL on a temporary link). */
export function download(name: string, data: string | Uint8Array<ArrayBuffer>, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  // The download has its own copy once started; revoke after the click's task.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
