SELECT * FROM up.send(:q, :payload);
