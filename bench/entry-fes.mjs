// The fetch-event-source peer as an app ships it (bundle-size entry).
export { fetchEventSource } from "@microsoft/fetch-event-source";
