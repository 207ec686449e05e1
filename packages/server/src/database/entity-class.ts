/** A TypeORM entity class, as a folder declares the tables it owns (its `*.entities.ts`). */
export type EntityClass = abstract new (...args: never[]) => object;
