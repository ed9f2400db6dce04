/**
 * A database of its own for a test, made on the server of DATABASE_URL and dropped after
 * (with whatever connections a killed process left open).
 */
import pg from "pg";

/**
 * @example
 * const db = await freshDatabase(process.env.DATABASE_URL!, "dbos");
 * // … db.url …
 * await db.drop();
 */
export async function freshDatabase(serverURL: string, prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: serverURL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(serverURL);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}
