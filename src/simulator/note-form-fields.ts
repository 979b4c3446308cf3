/**
 * The note form description fluentcrm-2.9 sends beside every notes listing (`fields`, as in
 * GET_subscribers_id_notes): the admin UI's form, the same on both captured sites.
 */
const NOTE_TYPES: [string, string][] = [
  ['note', 'Note'],
  ['call', 'Call'],
  ['email', 'Email'],
  ['meeting', 'Meeting'],
  ['quote_sent', 'Quote: Sent'],
  ['quote_accepted', 'Quote: Accepted'],
  ['quote_refused', 'Quote: Refused'],
  ['invoice_sent', 'Invoice: Sent'],
  ['invoice_part_paid', 'Invoice: Part Paid'],
  ['invoice_paid', 'Invoice: Paid'],
  ['invoice_refunded', 'Invoice: Refunded'],
  ['transaction', 'Transaction'],
  ['feedback', 'Feedback'],
  ['tweet', 'Tweet'],
  ['facebook_post', 'Facebook Post'],
];

export function noteFormFields(): Record<string, unknown> {
  return {
    fields: {
      type: { type: 'input-option', label: 'Type', id: 'fc_note_type', name: 'type', options: NOTE_TYPES.map(([id, label]) => ({ id, label })) },
      created_at: {
        type: 'input-date',
        data_type: 'datetime',
        name: 'created_at',
        label: 'Date Time',
        id: 'fc_note_title',
        value_format: 'yyyy-MM-dd HH:mm:ss',
        help: 'keep blank for current time',
      },
      title: { type: 'input-text', name: 'title', label: 'Title', id: 'fc_note_title', placeholder: 'Your Note Title' },
      description: { type: 'wp-editor', name: 'description', label: 'Description', id: 'fc_note_desc' },
    },
  };
}
