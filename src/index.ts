import { api } from "./api/app";

export { AppHub } from "./hub/app-hub";
export { Conversation } from "./conversation/conversation";

export default api;
