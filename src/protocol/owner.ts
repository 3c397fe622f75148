/** Who is asking, from the verified credential only: never from a request body. */
export interface Owner {
  tenant: string;
  user: string;
}
