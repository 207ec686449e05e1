import { Column, CreateDateColumn, UpdateDateColumn } from 'typeorm';

/**
 * The columns every mutable identity row carries (docs/protocol.md §6: an integer `revision` for optimistic
 * concurrency, who created it and when, when it last changed). Not an entity: the tables that extend
 * it have these columns of their own.
 */
export abstract class RevisedColumns {
  @Column({ type: 'int', default: 1 })
  revision: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'created_by', type: 'text' })
  createdBy: string;
}
