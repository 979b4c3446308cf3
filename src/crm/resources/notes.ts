import { checkId, checkPageQuery, type ClientContext } from '../client-context.js';
import { CrmArgumentError } from '../errors.js';
import { asObject, parsePage, parseRecord, schemaError } from '../parse.js';
import { formatSiteTime } from '../site-time.js';
import type { Note, NoteWrite, Page } from '../types.js';

export interface NotesApi {
  listPage(contactId: number, q: { page: number; perPage: number; search?: string }): Promise<Page<Note>>;
  create(contactId: number, note: NoteWrite): Promise<Note>;
  update(contactId: number, noteId: number, note: NoteWrite): Promise<Note>;
}

export function createNotesApi(ctx: ClientContext): NotesApi {
  const { exec, schemas } = ctx;

  function body(note: NoteWrite) {
    if (!note?.title || !note.description || !note.type) throw new CrmArgumentError('A note needs title, description and type');
    // created_at is required on write, in site time without a zone.
    return { note: { ...note, created_at: note.created_at ?? formatSiteTime(Date.now(), ctx.timezone) } };
  }

  function noteFrom(res: unknown, route: string): Note {
    const rec = asObject(res, route).note;
    if (!rec || typeof rec !== 'object') throw schemaError(route, 'expected "note" to be an object');
    return parseRecord(schemas.Note, rec, route);
  }

  return {
    async listPage(contactId, q) {
      checkId(contactId, 'contact id');
      checkPageQuery(q, 'notes.listPage');
      const res = await exec({ method: 'GET', path: `/subscribers/${contactId}/notes`, query: { page: q.page, per_page: q.perPage, search: q.search } });
      return parsePage(res, ['notes'], schemas.Note, q, 'GET /subscribers/{id}/notes');
    },
    async create(contactId, note) {
      checkId(contactId, 'contact id');
      const res = await exec({ method: 'POST', path: `/subscribers/${contactId}/notes`, body: body(note) });
      return noteFrom(res, 'POST /subscribers/{id}/notes');
    },
    async update(contactId, noteId, note) {
      checkId(contactId, 'contact id');
      checkId(noteId, 'note id');
      const res = await exec({ method: 'PUT', path: `/subscribers/${contactId}/notes/${noteId}`, body: body(note) }, { idempotent: true });
      return noteFrom(res, 'PUT /subscribers/{id}/notes/{note_id}');
    },
  };
}
