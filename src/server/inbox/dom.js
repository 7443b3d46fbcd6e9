/**
 * The live inbox's page helpers. Everything shown is put in with textContent, never parsed as
 * HTML: a patient writes the texts and the profile names.
 */

export const $ = (id) => document.getElementById(id);

export const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') node.textContent = value;
    else node.setAttribute(name, value === true ? '' : value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
};

export const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'short', timeStyle: 'short' });
export const when = (iso) =>
  iso ? el('time', { datetime: iso, text: timeFormat.format(new Date(iso)) }) : null;

export function notice(text) {
  $('notice').textContent = text ?? '';
  $('notice').hidden = !text;
}

export function setLive(kind, text) {
  $('live').dataset.state = kind;
  $('live').textContent = text;
}
