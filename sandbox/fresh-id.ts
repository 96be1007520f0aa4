// A new identifier for table.column, drawn by `make` until one is free. Random identifiers of the
// gateway's forms can repeat (KOCI + 8 digits: one in 90 million a draw); run inside the transaction
// that inserts it, the identifier checked free is still free when inserted.
export async function freshId(
  get: (sql: string, ...params: unknown[]) => Promise<unknown>,
  table: string,
  column: string,
  make: () => string,
): Promise<string> {
  for (let attempt = 0; attempt < 32; attempt++) {
    const id = make();
    if (!(await get(`SELECT 1 FROM ${table} WHERE ${column} = ?`, id))) return id;
  }
  throw new Error(`No free identifier for ${table}.${column}`);
}

/**
 * A row inserted under a new identifier in one statement, where the read and the insert above take two:
 * `insert(id)` runs `INSERT … ON CONFLICT (id) DO NOTHING RETURNING *` and answers the row, or nothing
 * when the identifier was taken (by a row committed or being committed: PostgreSQL waits for it), and
 * another is drawn.
 */
export async function insertFresh<T>(make: () => string, insert: (id: string) => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 32; attempt++) {
    const row = await insert(make());
    if (row) return row;
  }
  throw new Error('No free identifier');
}
