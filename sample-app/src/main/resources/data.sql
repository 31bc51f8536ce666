MERGE INTO tenant (id, reports_per_minute) KEY (id) VALUES ('acme', 3), ('globex', 6);
